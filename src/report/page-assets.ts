/** The page's own style and script, inlined: the report opens from disk with nothing fetched. */
export const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#212529;background:#f8f9fa}
header,main{padding:16px 24px}header{background:#fff;border-bottom:1px solid #dee2e6}
h1{margin:0 0 4px;font-size:22px}h2{font-size:17px;margin:24px 0 8px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;vertical-align:middle}
.meta{color:#495057}.meta span{margin-right:16px}
table.totals{border-collapse:collapse;margin-top:8px}.totals td{padding:2px 14px 2px 0}
.totals td:first-child{color:#868e96}
.controls{position:sticky;top:0;background:#f8f9fa;padding:8px 0;z-index:2;display:flex;gap:8px;align-items:center}
.controls input{width:260px}.controls *{font:inherit}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:12px}
.card{background:#fff;border:1px solid #dee2e6;border-radius:8px;padding:8px;overflow:hidden}
.grid.large .card{content-visibility:auto;contain-intrinsic-size:auto 280px}
.chain-row{display:grid;gap:12px;margin-bottom:12px}.chain-head{font-weight:600;color:#495057}
.chain.large .chain-row{content-visibility:auto;contain-intrinsic-size:auto 280px}
.row-label{font-weight:600;color:#495057}.cell{display:grid;gap:8px;align-content:start}
.card.failed,.card.unknown{border-color:#e03131;background:#fff5f5}
.card img{display:block;max-width:100%;height:auto;cursor:zoom-in;border-radius:4px}
.card video{width:100%;border-radius:4px}.card .prompt{margin:6px 0;max-height:6em;overflow:auto}
.card .facts{color:#868e96;font-size:12px}.error{color:#c92a2a;white-space:pre-wrap}.reason{color:#495057}
.step{background:#fff;border:1px solid #dee2e6;border-radius:8px;padding:8px 16px 16px;margin-bottom:16px}
pre{white-space:pre-wrap;background:#f1f3f5;padding:8px;border-radius:4px;max-height:28em;overflow:auto}
svg text{font:11px system-ui,sans-serif}.dag-id{fill:#fff;font-weight:600}.dag-kind{fill:#f1f3f5}
.edge{fill:none;stroke:#666;stroke-width:1.4}.rule{stroke:#dee2e6}.axis{fill:#495057}.muted{fill:#adb5bd}
.rate{fill:#74c0fc}.throttled{fill:#e03131}.paused{fill:#f1f3f5}
.scroll{overflow-x:auto;background:#fff;border:1px solid #dee2e6;border-radius:8px;padding:8px}
#lightbox{position:fixed;inset:0;background:rgba(0,0,0,.85);display:none;align-items:center;justify-content:center;
  z-index:9}
#lightbox.open{display:flex}#lightbox img{max-width:95vw;max-height:95vh}
.hidden{display:none!important}
`;

export const SCRIPT = `
(function(){
  var step=document.getElementById('f-step'),status=document.getElementById('f-status');
  var text=document.getElementById('f-text');
  var cards=[].slice.call(document.querySelectorAll('.card')),shown=document.getElementById('f-shown');
  function apply(){
    var s=step.value,st=status.value,q=text.value.trim().toLowerCase(),n=0;
    cards.forEach(function(c){
      var ok=(!s||c.dataset.step===s)&&(!st||c.dataset.status===st)&&(!q||c.dataset.text.indexOf(q)>=0);
      c.classList.toggle('hidden',!ok);if(ok)n++;
    });
    document.querySelectorAll('section.step').forEach(function(sec){
      var own=sec.dataset.steps?sec.dataset.steps.split(' '):[sec.dataset.step];
      sec.classList.toggle('hidden',!!s&&own.indexOf(s)<0);
    });
    shown.textContent=n+' of '+cards.length+' items';
  }
  [step,status].forEach(function(e){e.addEventListener('change',apply);});text.addEventListener('input',apply);
  var box=document.getElementById('lightbox'),big=box.querySelector('img');
  document.addEventListener('click',function(e){
    var a=e.target.closest&&e.target.closest('a.full');
    if(a){e.preventDefault();big.src=a.getAttribute('href');box.classList.add('open');return;}
    if(e.target.closest&&e.target.closest('#lightbox')){box.classList.remove('open');big.removeAttribute('src');}
  });
  document.addEventListener('keydown',function(e){if(e.key==='Escape')box.classList.remove('open');});
  apply();
})();
`;
